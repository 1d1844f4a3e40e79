package clusterset

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// RawConfig reads the kubeconfig for every command that uses one, refusing in one line the two
// mistakes client-go lets through: no kubeconfig file at all (client-go skips a missing
// KUBECONFIG file silently, and the empty config then reads as "context not found" or an empty
// clusterset), and a --context the kubeconfig does not have (commands that take --contexts would
// otherwise ignore it).
func RawConfig(cf *genericclioptions.ConfigFlags) (clientcmdapi.Config, error) {
	if err := kubeconfigExists(cf); err != nil {
		return clientcmdapi.Config{}, err
	}
	raw, err := cf.ToRawKubeConfigLoader().RawConfig()
	if err != nil {
		return clientcmdapi.Config{}, fmt.Errorf("loading kubeconfig: %w", err)
	}
	if c := flagContext(cf); c != "" {
		if _, ok := raw.Contexts[c]; !ok {
			return clientcmdapi.Config{}, notFound(c)
		}
	}
	return raw, nil
}

func notFound(context string) error { return fmt.Errorf("context %q not found in kubeconfig", context) }

// flagContext is --context ("" when not given).
func flagContext(cf *genericclioptions.ConfigFlags) string {
	if cf.Context == nil {
		return ""
	}
	return *cf.Context
}

// kubeconfigExists fails, naming the files, when none of those client-go would read exists.
// --kubeconfig is left to client-go, which names a missing one itself.
func kubeconfigExists(cf *genericclioptions.ConfigFlags) error {
	if cf.KubeConfig != nil && *cf.KubeConfig != "" {
		return nil
	}
	env := os.Getenv(clientcmd.RecommendedConfigPathEnvVar)
	var paths []string
	for _, p := range filepath.SplitList(env) {
		if p != "" {
			paths = append(paths, p)
		}
	}
	if len(paths) == 0 {
		paths, env = []string{clientcmd.RecommendedHomeFile}, ""
	}
	for _, p := range paths {
		if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
			return nil // there, or there but unreadable: client-go says why
		}
	}
	switch {
	case env == "":
		return fmt.Errorf("loading kubeconfig: %s: no such file (pass --kubeconfig or set %s)", paths[0], clientcmd.RecommendedConfigPathEnvVar)
	case len(paths) == 1:
		return fmt.Errorf("loading kubeconfig: %s=%s: no such file", clientcmd.RecommendedConfigPathEnvVar, paths[0])
	}
	return fmt.Errorf("loading kubeconfig: %s=%s: none of these files exists", clientcmd.RecommendedConfigPathEnvVar, strings.Join(paths, string(filepath.ListSeparator)))
}

// HasContext fails, as RawConfig does for --context, when the kubeconfig lacks a context named by
// another flag (diagnose's --karmada-context).
func HasContext(cf *genericclioptions.ConfigFlags, name string) error {
	raw, err := RawConfig(cf)
	if err != nil {
		return err
	}
	if _, ok := raw.Contexts[name]; !ok {
		return notFound(name)
	}
	return nil
}
