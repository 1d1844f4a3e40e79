package jsonkeys

import (
	"reflect"
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

type inner struct {
	Reason string
	Winner string `json:"Winner"`
}

type doc struct {
	metav1.TypeMeta `json:",inline"`
	Items           []inner            `json:"items"`
	ByName          map[string]*inner  `json:"byName,omitempty"`
	Conditions      []metav1.Condition `json:"conditions"`
	Hidden          bool               `json:"-"`
	Time            metav1.Time        `json:"time"`
	private         int                //nolint:unused // not marshalled
	Fine            struct {
		A string `json:"a"`
	} `json:"fine"`
}

func TestCheck(t *testing.T) {
	got := Check(reflect.TypeFor[*doc]())
	want := []string{
		`jsonkeys.doc.Items[].Reason: no json tag (marshalled as "Reason")`,
		`jsonkeys.doc.Items[].Winner: json key "Winner" is not lowerCamelCase`,
	}
	if !slices.Equal(got, want) {
		t.Errorf("Check:\n%q\nwant\n%q", got, want)
	}
	if got := Check(reflect.TypeFor[inner]()); len(got) != 2 {
		t.Errorf("Check(inner) = %q", got)
	}
}
