package snapshot

// What the member caches never hold of an object: pkg/member's Trim drops it as objects arrive.
// This is the one definition of it. The engine neither wants nor compares anything listed here:
// a write of it would never be seen to have happened, and sync would write it on every round.
// Besides, sync's caches hold the EndpointSlices it copied as their metadata and a digest of their
// content (digest.go), which the engine compares in place of the content.

// LastAppliedAnnotation is kubectl's client-side apply record: a whole copy of the object, read
// by nobody here, dropped from every kind.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

// LastChangeTriggerAnnotation is the EndpointSlice controller's note of when it last changed a
// slice, dropped from EndpointSlices.
const LastChangeTriggerAnnotation = "endpoints.kubernetes.io/last-change-trigger-time"

// DroppedAnnotation reports whether the caches drop annotation key from objects of kind, and
// why (for the export condition that names an annotation sync cannot export).
func DroppedAnnotation(kind, key string) (why string, dropped bool) {
	switch {
	case key == LastAppliedAnnotation:
		return "kubectl's client-side apply record, which sync does not keep", true
	case key == LastChangeTriggerAnnotation && kind == KindEndpointSlice:
		return "the EndpointSlice controller's timestamp, which sync does not keep", true
	}
	return "", false
}

// OwnedFieldsKept are the parts of the field manager's own managedFields entries that the
// caches keep (the other managers' entries keep only who and how): the labels and annotations it
// set, and the spec fields it set. Any other field a manager set is compared by value only.
var OwnedFieldsKept = [][]string{{"f:metadata", "f:labels"}, {"f:metadata", "f:annotations"}, {"f:spec"}}
