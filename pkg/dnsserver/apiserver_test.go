package dnsserver

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/watch"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	kubefake "k8s.io/client-go/kubernetes/fake"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/mcsapi"
)

// apiServer serves the fake clients over HTTP, as pkg/member reads a member (it builds its
// clients from the rest.Config): /readyz, the discovery of mcs-api version (none: not served),
// and lists and watches of ServiceImports and EndpointSlices, label selectors applied, a
// streaming list's initial events and closing bookmark included. While down is set, every
// request fails, as of an apiserver away.
func apiServer(t *testing.T, kc *kubefake.Clientset, dc *dynamicfake.FakeDynamicClient, version string, down *atomic.Bool) *httptest.Server {
	t.Helper()
	group := "/apis/" + mcsapi.Group + "/"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down != nil && down.Load() {
			http.Error(w, "connection refused", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		var list func(context.Context, metav1.ListOptions) (runtime.Object, error)
		var watcher func(context.Context, metav1.ListOptions) (watch.Interface, error)
		kind, apiVersion := "", ""
		switch p := r.URL.Path; {
		case p == "/readyz":
			_, _ = w.Write([]byte("ok"))
			return
		case version != "" && p == group+version:
			_ = json.NewEncoder(w).Encode(&metav1.APIResourceList{TypeMeta: metav1.TypeMeta{Kind: "APIResourceList", APIVersion: "v1"},
				GroupVersion: mcsapi.Group + "/" + version, APIResources: []metav1.APIResource{
					{Name: mcsapi.ServiceExports, Namespaced: true, Kind: "ServiceExport", Verbs: []string{"list", "watch"}},
					{Name: mcsapi.ServiceImports, Namespaced: true, Kind: "ServiceImport", Verbs: []string{"list", "watch"}}}})
			return
		case version != "" && p == group+version+"/"+mcsapi.ServiceImports:
			ri := dc.Resource(mcsapi.GVR(version, mcsapi.ServiceImports))
			list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) }
			watcher, kind, apiVersion = ri.Watch, "ServiceImport", mcsapi.Group+"/"+version
		case p == "/apis/discovery.k8s.io/v1/endpointslices":
			ri := kc.DiscoveryV1().EndpointSlices("")
			list = func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
				l, err := ri.List(ctx, o)
				if err == nil {
					l.Kind, l.APIVersion = "EndpointSliceList", "discovery.k8s.io/v1"
				}
				return l, err
			}
			watcher, kind, apiVersion = ri.Watch, "EndpointSlice", "discovery.k8s.io/v1"
		default:
			http.NotFound(w, r)
			return
		}
		q := r.URL.Query()
		opts := metav1.ListOptions{LabelSelector: q.Get("labelSelector")}
		sel, err := labels.Parse(opts.LabelSelector)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if q.Get("watch") != "true" {
			l, err := list(r.Context(), opts)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if a, err := meta.ListAccessor(l); err == nil && a.GetResourceVersion() == "" {
				a.SetResourceVersion("1")
			}
			_ = json.NewEncoder(w).Encode(l)
			return
		}
		wi, err := watcher(r.Context(), opts) // the fake's watch does not select by label: done below
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		defer wi.Stop()
		enc := json.NewEncoder(w)
		send := func(typ watch.EventType, o runtime.Object) {
			if a, err := meta.Accessor(o); err != nil || !sel.Matches(labels.Set(a.GetLabels())) {
				return
			}
			if s, ok := o.(*discoveryv1.EndpointSlice); ok {
				s = s.DeepCopy()
				s.Kind, s.APIVersion = kind, apiVersion
				o = s
			}
			_ = enc.Encode(map[string]any{"type": typ, "object": o})
			w.(http.Flusher).Flush()
		}
		if q.Get("sendInitialEvents") == "true" {
			l, err := list(r.Context(), opts)
			if err != nil {
				return
			}
			items, _ := meta.ExtractList(l)
			for _, o := range items {
				send(watch.Added, o)
			}
			fmt.Fprintf(w, `{"type":"BOOKMARK","object":{"kind":%q,"apiVersion":%q,"metadata":{"resourceVersion":"1","annotations":{"k8s.io/initial-events-end":"true"}}}}`+"\n", kind, apiVersion)
		}
		w.(http.Flusher).Flush()
		for {
			select {
			case <-r.Context().Done():
				return
			case e, ok := <-wi.ResultChan():
				if !ok {
					return
				}
				send(e.Type, e.Object)
			}
		}
	}))
	t.Cleanup(srv.Close)
	if !strings.HasPrefix(srv.URL, "http://") {
		t.Fatalf("apiserver on %s", srv.URL)
	}
	return srv
}
