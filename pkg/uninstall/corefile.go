package uninstall

import (
	"context"
	"fmt"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/corefile"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
)

// corefileKey is where kubeadm, kops and the CoreDNS chart keep the Corefile (as init reads it).
const corefileKey = "Corefile"

// removeForward takes init --dns's block out of the member's Corefile (corefile.Remove, as init
// --dns=false does), leaving the rest byte for byte. The ConfigMap is not ours: it is updated
// with the resourceVersion read, so that a concurrent edit fails this instead of being
// overwritten. A member without the ConfigMap, or without our block, has nothing to remove.
func (o *Options) removeForward(ctx context.Context, s *site) error {
	cms := s.conn.Client.CoreV1().ConfigMaps(o.ConfigMapNamespace)
	where := fmt.Sprintf("cluster %q: configmap %s/%s", s.conn.ID, o.ConfigMapNamespace, o.ConfigMapName)
	cm, err := cms.Get(ctx, o.ConfigMapName, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%s: %w", where, err)
	}
	cur, ok := cm.Data[corefileKey]
	if !ok || !corefile.Has(cur) {
		return nil
	}
	next, err := corefile.Remove(cur)
	if err != nil {
		return fmt.Errorf("%s: refusing to edit the Corefile: %w", where, err)
	}
	cm = cm.DeepCopy()
	cm.Data[corefileKey] = next
	if o.Write.DryRun != cmdutil.DryRunClient {
		opts := metav1.UpdateOptions{FieldManager: o.Write.FieldManager}
		if o.Write.DryRun == cmdutil.DryRunServer {
			opts.DryRun = []string{metav1.DryRunAll}
		}
		cm, err = cms.Update(ctx, cm, opts)
		if apierrors.IsConflict(err) {
			return fmt.Errorf("%s changed while uninstall ran; run it again", where)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", where, err)
		}
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(cm)
	if err != nil {
		return err
	}
	u := &unstructured.Unstructured{Object: obj}
	u.SetAPIVersion("v1")
	u.SetKind("ConfigMap")
	return o.report(printers.Written{Cluster: s.conn.ID, Resource: "configmap", Object: u}, "configured (clusterset DNS removed)")
}
