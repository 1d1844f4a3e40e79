// Package engine is the pure decision core of `kubectl mcs sync` (SPEC section 4, KEP-1645):
// observed state of every member cluster in, desired state and the writes to reach it out. It has
// no clients and never reads the clock; the result does not depend on the order of its input.
//
//	func Compute(obs Observed) Desired
//	func Plan(obs Observed, want Desired) []Action
//
// Membership. obs.Clusters are the members that were read (their caches synced, reachable now or
// not); obs.Evicted the ones read before and unreachable past --unreachable-timeout. Any other
// cluster that a ServiceImport's status.clusters or a slice's source-cluster label names is
// unread (down since start, not synced yet, outside --contexts): those records stand, in
// ClusterDesired.Held, and nothing of theirs is deleted or rewritten; obs.Members tells an unread
// member from a cluster outside the clusterset (Held.Outside). An ID no member has, which the
// imports record with the identity (ObservedCluster.UID) of one read member, is that member's
// former ID (FormerIDs): held as well, not as outside, until the caller evicts it once the
// member's records under its present ID are there. obs.Services, when set, is the only
// services the observation decides: an object of another service it happens to hold is never
// collected.
//
// Compute, per service NS/NAME decided (a ServiceExport in some cluster, or records of ours):
//   - The export is a constituent when its cluster has a Service NS/NAME that is not ExternalName
//     and not managed by kubectl-mcs (a derived Service is never a source). Otherwise its only
//     desired condition is Valid=False (NoService or InvalidServiceType): Ready and Conflict
//     describe the clusterset service, which that export is not part of, so stale ones are removed.
//   - Constituents are ordered by export creationTimestamp, then cluster ID; the oldest wins every
//     conflict. Ports are the union, merged by name then by (protocol, port) with "" meaning
//     TCP; a duplicate takes the older definition. An unnamed port goes by its protocol and
//     number ("tcp-80": derived from the port alone, so the same in every pass and cluster, a
//     DNS-1123 label of at most 10 characters). A union of more than one port carries that name
//     (the apiserver refuses a Service of several ports with an unnamed one); a union of one
//     port keeps the name its export gave it, none included. The generated name is a name like
//     any other: where some Service uses it for another port, the older port keeps it and the
//     other is left out, as any duplicate. Any constituent whose set of ports differs from the
//     oldest's raises PortConflict, whose message names the export each port came from. Every
//     conflict names, per losing export, its cluster and the value that lost (Conflict.Losing; for
//     ports also those nothing answers on and those its endpoints get no traffic on), each message
//     within maxConflictMessage so that the joined condition fits the apiserver's limit. A
//     None/ClientIP split is only a SessionAffinityConflict; the config is compared among ClientIP
//     constituents. Unset internalTrafficPolicy equals Cluster.
//   - Every constituent export in a reachable cluster gets Valid, Ready and Conflict. Valid is
//     True, reason Valid, or AnnotationsNotExported when its exportedAnnotations name one the
//     caches drop (kubectl's last-applied record), which the message names. Ready is
//     True once every reachable cluster holding namespace NS has a managed ServiceImport NS/NAME.
//     A cluster blocked by a foreign object (below) keeps Ready at Pending: the service is not
//     usable there, and the message says why. A write of the service that keeps failing
//     (obs.Failing) makes Ready False, reason Failed, naming the object, its cluster and the
//     apiserver's answer; it changes nothing else that is desired. No message carries a count of
//     clusters, so a reachability flap rewrites nothing.
//   - In every reachable cluster holding NS: ServiceImport NS/NAME (status.clusters: the
//     constituents and the unread exporters this cluster recorded; the oldest export's exported
//     labels and annotations, except what the caches drop, snapshot.DroppedAnnotation; in
//     names.SourceClusterUIDsAnnotation the identity of every cluster it names or this cluster
//     still holds records of, a read one's own, an unread one's as recorded), derived
//     Service (a single-stack export's family, SingleStack; PreferDualStack naming no family when
//     the exporters are dual-stack, which a single-stack cluster of either family accepts; the
//     import lists the families and IPs it got) and one EndpointSlice per unmanaged source slice
//     (kubernetes.io/service-name=NAME) of every constituent, unreachable constituents included
//     (last-known endpoints are kept until the caller evicts the cluster). A copy carries only the
//     ports its source cluster's own Service exports exactly as the import does (an unnamed port
//     as its generated name), named as the derived Service names them, since kube-proxy matches
//     slice ports to Service ports by name and protocol; one left with none is not made.
//   - The import's Ready condition (mcs-api v1beta1 ServiceImportConditionReady, importready.go):
//     False/IPFamilyNotSupported while the derived Service is missing because the cluster refused
//     it for its family (obs.Failing; kept by a sync not told yet); False/Pending until the derived
//     Service is there with its cluster IP (headless: there) and one of the copies desired there
//     is; True/Ready after. One message per reason, so an import's steps write its status twice,
//     and the transition time is kept while the status holds. A served schema without
//     status.conditions (v0.1.0-era v1alpha1) gets none.
//   - A service whose trafficDistribution (the oldest export's) is PreferClose, PreferSameZone or
//     PreferSameNode has every endpoint of its copies hinted with the endpoint's own zone, in every
//     member (zonehints.go), when every endpoint of its constituents' copied source slices, ready
//     or not, has a zone a hint may name (kube-proxy ignores a Service's hints once one ready
//     endpoint has none); otherwise no copy is hinted, and Summary.ZoneHints names the clusters
//     whose endpoints lack a zone. No node hints: a copy names no node, so PreferSameNode is
//     carried as its zones.
//   - A cluster whose own export of the service carries names.TrafficDistributionAnnotation
//     PreferSameCluster, and whose nodes' zones allow it (ChoiceOf: at least one zone, at most
//     MaxZoneHints, none of them OtherClusterZone), gets its choice's hints on every endpoint of
//     its copies in place of the service's zone hints (hints.go): its own with its nodes' zones,
//     the others' with OtherClusterZone; a Headless service's too, which the member's DNS server
//     reads (pkg/dnszone). Every other copy carries the service's zone hints, or
//     none. Where the nodes were not read (Topology nil), a copy keeps the hints it holds.
//   - With no constituent, a cluster keeps the import (naming only unread exporters), derived
//     Service and slices that stand for unread clusters, and nothing else of the service.
//   - A ServiceImport NS/NAME or a Service derived-NAME without the managed-by label makes the
//     engine skip that cluster for the service (reported in Skipped, nothing desired there).
//   - Owner references (derived Service -> ServiceImport, slices -> derived Service) are desired
//     only once the owner's UID has been observed, so they appear on the pass after creation.
//   - A cluster's ImportSchema/ExportSchema prune what is desired there to what its served CRD
//     declares, so that is all that is written and compared.
//
// Plan compares desired with observed on the fields the engine owns only, normalising apiserver
// defaults, so a steady state produces no writes: what the caches never hold (snapshot/cached.go)
// is never compared, and a field desired leaves unset counts only where the object's managedFields
// say we set it (the apply then removes it); what another field manager set there (a selector, a
// port, a traffic policy) is theirs and no reason to write. It never acts on an object without the
// managed-by label, and deletes stale objects (managed, carrying sync's own mark: the
// derived-service annotation, the service-name or source-cluster label, naming a service obs
// decides, and not held for an unread cluster).
package engine
