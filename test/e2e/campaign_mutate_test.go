//go:build e2e

package e2e

// The fault campaign's mutations: the model of what it did to each churn service, the random
// steps that change them with client-go, and the member outages of a soak.

import (
	"context"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/client-go/util/retry"
	mcsv1beta1 "sigs.k8s.io/mcs-api/pkg/apis/v1beta1"
)

// modelSvc is what the campaign did to one service name: the port of all its Services and, per
// member, what exists there.
type modelSvc struct {
	name   string
	stable bool
	port   int32
	in     map[string]*modelIn
}

// modelIn is one member's part of a service: a Deployment and Service (created and deleted
// together), and a ServiceExport.
type modelIn struct {
	service  bool
	replicas int32
	export   bool
}

// mutate changes the churn services until ctx ends: one mutation every 0.1 to 0.6 s.
func (c *campaign) mutate(ctx context.Context) {
	for {
		c.mu.Lock()
		pause := 100*time.Millisecond + time.Duration(c.rng.Int63n(int64(500*time.Millisecond)))
		c.mu.Unlock()
		select {
		case <-ctx.Done():
			return
		case <-time.After(pause):
		}
		c.mu.Lock()
		c.step()
		c.mu.Unlock()
	}
}

type mutation struct {
	what  string
	count *int
	do    func() error
}

// step applies one random mutation that the members that are up allow. Called with c.mu held.
func (c *campaign) step() {
	var ops []mutation
	for _, s := range c.svcs {
		if s.stable {
			continue
		}
		allUp := true
		for m, in := range s.in {
			if in.service && !c.up[m] {
				allUp = false
			}
		}
		hasService := false
		for _, m := range members {
			in := s.in[m]
			if in == nil {
				in = &modelIn{}
			}
			hasService = hasService || in.service
			if !c.up[m] {
				continue
			}
			s, m := s, m
			switch {
			case !in.service:
				ops = append(ops, mutation{fmt.Sprintf("create %s in %s", s.name, m), &c.stats.Created, func() error {
					r := int32(1 + c.rng.Intn(3))
					if err := c.createService(m, s, r); err != nil {
						return err
					}
					st := c.in(s, m)
					st.service, st.replicas = true, r
					if !st.export && c.rng.Intn(10) > 0 {
						if err := c.createExport(m, s.name); err != nil {
							return err
						}
						st.export = true
					}
					return nil
				}})
			default:
				ops = append(ops,
					mutation{fmt.Sprintf("scale %s in %s", s.name, m), &c.stats.Changed, func() error {
						r := int32(1 + c.rng.Intn(3))
						if err := c.scale(m, s.name, r); err != nil {
							return err
						}
						c.in(s, m).replicas = r
						return nil
					}},
					mutation{fmt.Sprintf("delete the Service and Deployment of %s in %s", s.name, m), &c.stats.Deleted, func() error {
						if err := c.deleteService(m, s.name); err != nil {
							return err
						}
						st := c.in(s, m)
						st.service, st.replicas = false, 0
						return nil
					}})
				if !in.export {
					ops = append(ops, mutation{fmt.Sprintf("export %s in %s", s.name, m), &c.stats.Created, func() error {
						if err := c.createExport(m, s.name); err != nil {
							return err
						}
						c.in(s, m).export = true
						return nil
					}})
				}
			}
			if in.export {
				ops = append(ops, mutation{fmt.Sprintf("unexport %s in %s", s.name, m), &c.stats.Deleted, func() error {
					if err := c.deleteExport(m, s.name); err != nil {
						return err
					}
					c.in(s, m).export = false
					return nil
				}})
			}
			if in.export && in.service {
				ops = append(ops, mutation{fmt.Sprintf("delete %s (export, Service, Deployment) in %s", s.name, m), &c.stats.Deleted, func() error {
					if err := c.deleteExport(m, s.name); err != nil {
						return err
					}
					c.in(s, m).export = false
					if err := c.deleteService(m, s.name); err != nil {
						return err
					}
					st := c.in(s, m)
					st.service, st.replicas = false, 0
					return nil
				}})
			}
		}
		if hasService && allUp {
			s := s
			ops = append(ops, mutation{fmt.Sprintf("change the port of %s everywhere", s.name), &c.stats.Changed, func() error {
				port := s.port
				for port == s.port {
					port = int32(80 + c.rng.Intn(3))
				}
				for _, m := range sortedKeys(s.in) {
					if !s.in[m].service {
						continue
					}
					if err := c.setPort(m, s.name, port); err != nil {
						return err
					}
				}
				s.port = port
				return nil
			}})
		}
	}
	if len(ops) == 0 {
		return
	}
	op := ops[c.rng.Intn(len(ops))]
	c.record("%s", op.what)
	c.stats.Mutations++
	*op.count++
	began := time.Now()
	err := op.do()
	if d := time.Since(began); d > 2*time.Second {
		c.record("(%q took %v)", op.what, d.Round(time.Millisecond))
	}
	if err != nil {
		c.stats.FailedMutations++
		c.errs = append(c.errs, fmt.Sprintf("mutation %q: %v (the expected final state may be off)", op.what, err))
	}
}

func (c *campaign) in(s *modelSvc, m string) *modelIn {
	if s.in[m] == nil {
		s.in[m] = &modelIn{}
	}
	return s.in[m]
}

func apiCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.Background(), 20*time.Second)
}

// createService creates the Deployment and Service of s in m (ports: s.port -> s.port+8000).
func (c *campaign) createService(m string, s *modelSvc, replicas int32) error {
	ctx, cancel := apiCtx()
	defer cancel()
	labels := map[string]string{"app": s.name}
	dep := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: c.ns, Labels: labels},
		Spec: appsv1.DeploymentSpec{
			Replicas: &replicas,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "serve", Image: "jeremyot/serve:0a40de8"}}},
			},
		},
	}
	if _, err := clients[m].kube.AppsV1().Deployments(c.ns).Create(ctx, dep, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: creating Deployment %s: %w", m, s.name, err)
	}
	svc := &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: s.name, Namespace: c.ns},
		Spec: corev1.ServiceSpec{
			Selector: labels,
			Ports:    []corev1.ServicePort{{Port: s.port, TargetPort: intstr.FromInt32(s.port + 8000), Protocol: corev1.ProtocolTCP}},
		},
	}
	if _, err := clients[m].kube.CoreV1().Services(c.ns).Create(ctx, svc, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: creating Service %s: %w", m, s.name, err)
	}
	return nil
}

func (c *campaign) deleteService(m, name string) error {
	ctx, cancel := apiCtx()
	defer cancel()
	bg := metav1.DeletePropagationBackground
	if err := clients[m].kube.CoreV1().Services(c.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("%s: deleting Service %s: %w", m, name, err)
	}
	if err := clients[m].kube.AppsV1().Deployments(c.ns).Delete(ctx, name, metav1.DeleteOptions{PropagationPolicy: &bg}); err != nil {
		return fmt.Errorf("%s: deleting Deployment %s: %w", m, name, err)
	}
	return nil
}

func (c *campaign) scale(m, name string, replicas int32) error {
	ctx, cancel := apiCtx()
	defer cancel()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		d, err := clients[m].kube.AppsV1().Deployments(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		d.Spec.Replicas = &replicas
		_, err = clients[m].kube.AppsV1().Deployments(c.ns).Update(ctx, d, metav1.UpdateOptions{})
		return err
	})
}

func (c *campaign) setPort(m, name string, port int32) error {
	ctx, cancel := apiCtx()
	defer cancel()
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		s, err := clients[m].kube.CoreV1().Services(c.ns).Get(ctx, name, metav1.GetOptions{})
		if err != nil {
			return fmt.Errorf("%s: %w", m, err)
		}
		s.Spec.Ports[0].Port, s.Spec.Ports[0].TargetPort = port, intstr.FromInt32(port+8000)
		_, err = clients[m].kube.CoreV1().Services(c.ns).Update(ctx, s, metav1.UpdateOptions{})
		return err
	})
}

func (c *campaign) createExport(m, name string) error {
	ctx, cancel := apiCtx()
	defer cancel()
	se := &mcsv1beta1.ServiceExport{TypeMeta: metav1.TypeMeta{APIVersion: "multicluster.x-k8s.io/v1beta1", Kind: "ServiceExport"},
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: c.ns}}
	u, err := runtime.DefaultUnstructuredConverter.ToUnstructured(se)
	if err != nil {
		return err
	}
	if _, err := clients[m].dyn.Resource(seGVR("v1beta1")).Namespace(c.ns).Create(ctx, &unstructured.Unstructured{Object: u}, metav1.CreateOptions{}); err != nil {
		return fmt.Errorf("%s: creating ServiceExport %s: %w", m, name, err)
	}
	return nil
}

func (c *campaign) deleteExport(m, name string) error {
	ctx, cancel := apiCtx()
	defer cancel()
	if err := clients[m].dyn.Resource(seGVR("v1beta1")).Namespace(c.ns).Delete(ctx, name, metav1.DeleteOptions{}); err != nil {
		return fmt.Errorf("%s: deleting ServiceExport %s: %w", m, name, err)
	}
	return nil
}

func (c *campaign) isUp(m string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.up[m]
}

// setMember stops or starts a member's processes, with no mutation in flight.
func (c *campaign) setMember(m, verb string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.logf("%s %s", verb, m)
	c.record("%s %s", verb, m)
	if verb == "stop" {
		c.up[m] = false
	}
	testbed(c.t, verb, m)
	if verb == "start" {
		c.up[m] = true
	}
}
