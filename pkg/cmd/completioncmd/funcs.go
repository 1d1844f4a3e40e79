package completioncmd

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/names"
)

// Timeout bounds the API requests made to complete a word (namespaces, Services) unless
// --request-timeout is given: a completion that hangs on an unreachable cluster is worse than none.
const Timeout = 5 * time.Second

// Register wires the dynamic completion into the command tree under root; call it once the tree
// is complete. It goes by the shared flag names of the command-line contract, so a command gets
// completion by using them:
//
//   - --context, --cluster, --user (kubectl's own completion) and -n/--namespace, the namespaces
//     of the --context cluster;
//   - --contexts: kubeconfig contexts, completing the part after the last comma;
//   - --karmada-context, --leader-elect-context: kubeconfig contexts;
//   - --providers, --consumers: the cluster IDs of --contexts (else the kubeconfig's contexts);
//   - --dry-run: none, client, server;
//   - a first argument named SERVICE or [SERVICE] in Use: the Services of the namespace, in every
//     context of the clusterset (--contexts), or on the --context / Karmada control plane; not the
//     derived-* Services sync writes, nor ExternalName ones, which cannot be exported, nor the
//     apiserver's own default/kubernetes, which should not be.
//
// A command that registered a function of its own for a flag or its arguments keeps it.
//
// The functions do what kubectl's (k8s.io/kubectl/pkg/util/completion) do, with client-go
// directly: that package links kubectl's get and describe into the plugin, nearly doubling its
// size (35 MB to 67 MB) for four list calls.
func Register(root *cobra.Command, flags *genericclioptions.ConfigFlags) {
	c := &completer{flags: flags}
	perFlag := map[string]cobra.CompletionFunc{
		"namespace":            c.namespaces,
		"context":              c.context,
		"cluster":              c.cluster,
		"user":                 c.user,
		"contexts":             c.contextList,
		"karmada-context":      c.context,
		"leader-elect-context": c.context,
		"providers":            c.clusterIDList,
		"consumers":            c.clusterIDList,
		"dry-run":              fixed("none", "client", "server"),
	}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for name, fn := range perFlag {
			if cmd.Flag(name) == nil {
				continue
			}
			if _, done := cmd.GetFlagCompletionFunc(name); done {
				continue
			}
			cmdutil.CheckErr(cmd.RegisterFlagCompletionFunc(name, fn))
		}
		if cmd.ValidArgsFunction == nil && firstArg(cmd.Use) == "SERVICE" {
			cmd.ValidArgsFunction = c.services
		}
		for _, sub := range cmd.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// firstArg returns the first argument placeholder of a Use line, without brackets.
func firstArg(use string) string {
	f := strings.Fields(use)
	if len(f) < 2 {
		return ""
	}
	return strings.Trim(f[1], "[]")
}

func fixed(values ...string) cobra.CompletionFunc {
	return func(_ *cobra.Command, _ []string, toComplete string) ([]string, cobra.ShellCompDirective) {
		var out []string
		for _, v := range values {
			if strings.HasPrefix(v, toComplete) {
				out = append(out, v)
			}
		}
		return out, cobra.ShellCompDirectiveNoFileComp
	}
}

type completer struct {
	flags *genericclioptions.ConfigFlags
}

// withPrefix returns the keys of m that start with prefix, sorted.
func withPrefix[V any](m map[string]V, prefix string) []string {
	var out []string
	for name := range m {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

func (c *completer) context(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return c.contexts(toComplete), cobra.ShellCompDirectiveNoFileComp
}

// contexts lists the kubeconfig's contexts that start with prefix.
func (c *completer) contexts(prefix string) []string {
	raw, err := c.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil
	}
	return withPrefix(raw.Contexts, prefix)
}

func (c *completer) cluster(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	raw, err := c.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(raw.Clusters, toComplete), cobra.ShellCompDirectiveNoFileComp
}

func (c *completer) user(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	raw, err := c.flags.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	return withPrefix(raw.AuthInfos, toComplete), cobra.ShellCompDirectiveNoFileComp
}

// contextList completes a CTX[=ID],... list: the word after the last comma, from the
// kubeconfig's contexts not listed yet. Nothing is offered for an ID.
func (c *completer) contextList(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return completeList(toComplete, func() []string { return c.contexts("") })
}

// clusterIDList completes --providers/--consumers: the cluster IDs of the clusterset named with
// --contexts (or $KUBECTL_MCS_CONTEXTS), else the kubeconfig's context names.
func (c *completer) clusterIDList(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	return completeList(toComplete, func() []string {
		refs := clustersetRefs(cmd)
		if len(refs) == 0 {
			return c.contexts("")
		}
		ids := make([]string, 0, len(refs))
		for _, r := range refs {
			ids = append(ids, r.ID)
		}
		return ids
	})
}

// completeList completes the last element of a comma-separated list from candidates, leaving out
// those listed already, and keeps the cursor on the word so that a comma (or =ID) can follow.
func completeList(toComplete string, candidates func() []string) ([]string, cobra.ShellCompDirective) {
	done, word := "", toComplete
	if i := strings.LastIndex(toComplete, ","); i >= 0 {
		done, word = toComplete[:i+1], toComplete[i+1:]
	}
	if strings.Contains(word, "=") {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	listed := map[string]bool{}
	for _, part := range strings.Split(done, ",") {
		name, _, _ := strings.Cut(part, "=")
		listed[strings.TrimSpace(name)] = true
	}
	var out []string
	for _, cand := range candidates() {
		if strings.HasPrefix(cand, word) && !listed[cand] {
			out = append(out, done+cand)
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp | cobra.ShellCompDirectiveNoSpace
}

// namespaces lists the namespaces of the --context cluster, as kubectl does.
func (c *completer) namespaces(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	cfg, err := c.flags.ToRESTConfig()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	ctx, cancel := requestContext(cmd)
	defer cancel()
	return list(ctx, cfg, toComplete, func(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
		l, err := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var out []string
		for _, o := range l.Items {
			out = append(out, o.Name)
		}
		return out, nil
	}), cobra.ShellCompDirectiveNoFileComp
}

// services lists the Services of the namespace: on the Karmada control plane in Karmada mode, in
// every context of the clusterset when one is named (concurrently), else in the --context cluster.
func (c *completer) services(cmd *cobra.Command, args []string, toComplete string) ([]string, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	// The namespace is the one of --context (or the current context), in every member, as the
	// commands themselves do.
	ns, _, err := c.flags.ToRawKubeConfigLoader().Namespace()
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var configs []func() (*rest.Config, error)
	loader := &clusterset.Loader{ConfigFlags: c.flags}
	if karmadaCtx := flagValue(cmd, "karmada-context"); karmadaCtx != "" {
		configs = append(configs, func() (*rest.Config, error) { return loader.RESTConfig(karmadaCtx) })
	} else if flagValue(cmd, "karmada") != "true" {
		for _, r := range clustersetRefs(cmd) {
			configs = append(configs, func() (*rest.Config, error) { return loader.RESTConfig(r.Context) })
		}
	}
	if len(configs) == 0 {
		configs = append(configs, c.flags.ToRESTConfig)
	}
	ctx, cancel := requestContext(cmd)
	defer cancel()
	var (
		mu  sync.Mutex
		wg  sync.WaitGroup
		all []string
	)
	for _, config := range configs {
		wg.Go(func() {
			cfg, err := config()
			if err != nil {
				return
			}
			found := list(ctx, cfg, toComplete, func(ctx context.Context, cs kubernetes.Interface) ([]string, error) {
				l, err := cs.CoreV1().Services(ns).List(ctx, metav1.ListOptions{})
				if err != nil {
					return nil, err
				}
				var out []string
				for _, o := range l.Items {
					if offered(&o) {
						out = append(out, o.Name)
					}
				}
				return out, nil
			})
			mu.Lock()
			defer mu.Unlock()
			all = append(all, found...)
		})
	}
	wg.Wait()
	slices.Sort(all)
	return slices.Compact(all), cobra.ShellCompDirectiveNoFileComp
}

// offered says whether a Service is one to export: not sync's derived-* Services, nor ExternalName
// ones (KEP-1645), nor the apiserver's own default/kubernetes, each member's own way to its
// apiserver, which another member must not import.
func offered(s *corev1.Service) bool {
	return !names.IsManaged(s.Labels) && s.Spec.Type != corev1.ServiceTypeExternalName && !names.IsAPIServer(s.Namespace, s.Name)
}

// list returns the names listed by get that start with prefix; nothing on error.
func list(ctx context.Context, cfg *rest.Config, prefix string, get func(context.Context, kubernetes.Interface) ([]string, error)) []string {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil
	}
	all, err := get(ctx, cs)
	if err != nil {
		return nil
	}
	var out []string
	for _, name := range all {
		if strings.HasPrefix(name, prefix) {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// requestContext bounds completion's API requests by Timeout, unless --request-timeout was given
// (client-go applies that one).
func requestContext(cmd *cobra.Command) (context.Context, context.CancelFunc) {
	if f := cmd.Flag("request-timeout"); f != nil && f.Changed {
		return context.WithCancel(context.Background())
	}
	return context.WithTimeout(context.Background(), Timeout)
}

// clustersetRefs reads the clusterset named on the command line (or in $KUBECTL_MCS_CONTEXTS)
// leniently: a half-typed list is fine, nothing is validated.
func clustersetRefs(cmd *cobra.Command) []clusterset.Ref {
	spec := flagValue(cmd, "contexts")
	if spec == "" {
		spec = os.Getenv(clusterset.EnvContexts)
	}
	var refs []clusterset.Ref
	for _, part := range strings.Split(spec, ",") {
		ctx, id, _ := strings.Cut(part, "=")
		ctx, id = strings.TrimSpace(ctx), strings.TrimSpace(id)
		if ctx == "" {
			continue
		}
		if id == "" {
			id = ctx
		}
		refs = append(refs, clusterset.Ref{Context: ctx, ID: id})
	}
	return refs
}

func flagValue(cmd *cobra.Command, name string) string {
	if f := cmd.Flag(name); f != nil {
		return f.Value.String()
	}
	return ""
}
