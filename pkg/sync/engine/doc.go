// Package engine is the pure decision core of `kubectl mcs sync` (SPEC section 4, KEP-1645):
// observed state of every member cluster in, desired state and the writes to reach it out. It has
// no clients and never reads the clock; the result does not depend on the order of its input.
//
//	func Compute(obs Observed) Desired
//	func Plan(obs Observed, want Desired, allSynced bool) []Action
//
// Compute, per exported service NS/NAME (a ServiceExport in some cluster):
//   - The export is a constituent when its cluster has a Service NS/NAME that is not ExternalName
//     and not managed by kubectl-mcs (a derived Service is never a source). Otherwise its only
//     desired condition is Valid=False (NoService or InvalidServiceType): Ready and Conflict
//     describe the clusterset service, which that export is not part of, so stale ones are removed.
//   - Constituents are ordered by export creationTimestamp, then cluster ID; the oldest wins every
//     conflict. Ports are the union, merged by name (an empty name is a name) then by
//     (protocol, port) with "" meaning TCP; collisions take the older definition and raise
//     PortConflict. A None/ClientIP split is only a SessionAffinityConflict; the config is
//     compared among ClientIP constituents. Unset internalTrafficPolicy equals Cluster.
//   - Every constituent export in a reachable cluster gets Valid, Ready and Conflict. Ready is
//     True once every reachable cluster holding namespace NS has a managed ServiceImport NS/NAME.
//     A cluster blocked by a foreign object (below) keeps Ready at Pending: the service is not
//     usable there, and the message says why.
//   - In every reachable cluster holding NS: ServiceImport NS/NAME, derived Service and one
//     EndpointSlice per unmanaged source slice (kubernetes.io/service-name=NAME) of every
//     constituent, unreachable constituents included (last-known endpoints are kept; dropping a
//     cluster after --unreachable-timeout is the caller's job: leave it out of Observed).
//   - A ServiceImport NS/NAME or a Service derived-NAME without the managed-by label makes the
//     engine skip that cluster for the service (reported in Skipped, nothing desired there).
//   - Owner references (derived Service -> ServiceImport, slices -> derived Service) are desired
//     only once the owner's UID has been observed, so they appear on the pass after creation.
//
// Plan compares desired with observed on the fields the engine owns only, normalising apiserver
// defaults, so a steady state produces no writes. It never acts on an object without the
// managed-by label, and deletes stale objects (managed and carrying sync's own mark:
// the derived-service annotation, the service-name or source-cluster label) only when allSynced.
package engine
