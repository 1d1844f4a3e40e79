package member

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/kubectl-mcs/kubectl-mcs/internal/logcapture"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
)

// TestMain installs the klog capture before any test starts a goroutine that logs.
func TestMain(m *testing.M) { logcapture.Main(m) }

// fakeAPIServer answers what a joining member asks: /readyz, the mcs-api discovery, and empty
// lists and watches (a streaming list's closing bookmark included) of the kinds it watches; any
// other path (its ClusterProperty) is property's to answer, or not found.
func fakeAPIServer(t *testing.T, property ...http.HandlerFunc) *httptest.Server {
	t.Helper()
	kinds := map[string]string{"services": "Service", "endpointslices": "EndpointSlice", "namespaces": "Namespace",
		"serviceexports": "ServiceExport", "serviceimports": "ServiceImport"}
	done := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
		kind, apiVersion := "", ""
		if len(parts) >= 3 {
			kind, apiVersion = kinds[parts[len(parts)-1]], strings.Join(parts[1:len(parts)-1], "/") // api/v1/services: v1
		}
		switch {
		case r.URL.Path == "/readyz":
			_, _ = w.Write([]byte("ok"))
		case r.URL.Path == "/apis/multicluster.x-k8s.io/v1beta1":
			_ = json.NewEncoder(w).Encode(&metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: "multicluster.x-k8s.io/v1beta1", APIResources: []metav1.APIResource{
					{Name: "serviceexports", Namespaced: true, Kind: "ServiceExport", Verbs: []string{"list", "watch"}},
					{Name: "serviceimports", Namespaced: true, Kind: "ServiceImport", Verbs: []string{"list", "watch"}}}})
		case kind != "" && r.URL.Query().Get("watch") == "true":
			if r.URL.Query().Get("sendInitialEvents") == "true" {
				fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", kind, apiVersion)
			}
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-done:
			}
		case kind != "":
			fmt.Fprintf(w, `{"kind":"%sList","apiVersion":%q,"metadata":{"resourceVersion":"1"},"items":[]}`, kind, apiVersion)
		case len(property) > 0:
			property[0](w, r)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(func() {
		close(done)
		srv.Close()
	})
	return srv
}

// A member that joins says so only at -v=2: one-shot commands wrote "member joined" to stderr
// every time.
func TestJoinIsQuietByDefault(t *testing.T) {
	logged := logcapture.Since()

	c := connection(t, fakeAPIServer(t))
	c.Ref = clusterset.Ref{Context: "m", ID: "m"}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New([]*clusterset.Connection{c}, Config{})[0]
	go m.Run(ctx)
	Wait(ctx, []*Cache{m}, 10*time.Second)
	if st := m.State(); !st.Joined {
		t.Fatalf("not joined: %v", st.Err)
	}
	if got := logged(); got != "" {
		t.Errorf("at the default verbosity, a member joining logs:\n%s", got)
	}
}

// connection is a member's clients of srv.
func connection(t *testing.T, srv *httptest.Server) *clusterset.Connection {
	t.Helper()
	cfg := &rest.Config{Host: srv.URL}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &clusterset.Connection{Config: cfg, Client: cs, Dynamic: dyn, Discovery: cs.Discovery()}
}
