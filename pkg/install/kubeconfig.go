package install

import (
	"fmt"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// TokenKubeconfig is a member's kubeconfig for the deployed sync: its apiserver at address (""
// : as the user's kubeconfig reaches it), the CA the user trusts it with (else the one the token
// Secret carries), and the ServiceAccount token. Cluster, user and context are all named by the
// member's ID, so the files merge without collisions. At InClusterServer (the host's own
// apiserver, from inside) the CA is the token Secret's alone, with no TLS server name: the
// cluster's own CA, which signs what the kubernetes Service serves, where the user's may be a
// proxy's or another signer's, and the name the user's certificate check needs another.
func TokenKubeconfig(id string, server *rest.Config, address string, secretCA []byte, token string) ([]byte, error) {
	if address == InClusterServer {
		return write(id, &clientcmdapi.Cluster{Server: address, CertificateAuthorityData: secretCA}, &clientcmdapi.AuthInfo{Token: token})
	}
	ca, err := caData(server)
	if err != nil {
		return nil, fmt.Errorf("cluster %q: reading its CA: %w", id, err)
	}
	cluster := &clientcmdapi.Cluster{Server: server.Host, TLSServerName: server.ServerName,
		InsecureSkipTLSVerify: server.Insecure, CertificateAuthorityData: ca}
	if len(ca) == 0 && !server.Insecure {
		cluster.CertificateAuthorityData = secretCA
	}
	return write(id, atAddress(cluster, address), &clientcmdapi.AuthInfo{Token: token})
}

// atAddress is cluster reached at address instead ("" keeps it): the same CA, TLS server name
// and verification, since it is the same apiserver.
func atAddress(cluster *clientcmdapi.Cluster, address string) *clientcmdapi.Cluster {
	if address == "" {
		return cluster
	}
	c := cluster.DeepCopy()
	c.Server = address
	return c
}

func caData(c *rest.Config) ([]byte, error) {
	if len(c.CAData) > 0 || c.CAFile == "" {
		return c.CAData, nil
	}
	cfg := rest.CopyConfig(c)
	if err := rest.LoadTLSFiles(cfg); err != nil {
		return nil, err
	}
	return cfg.CAData, nil
}

// CurrentKubeconfig is the user's own kubeconfig entry for one context, with every file it
// names embedded, renamed to the member's ID, its apiserver at address ("": as it is).
func CurrentKubeconfig(raw clientcmdapi.Config, context, id, address string) ([]byte, error) {
	c := raw.DeepCopy()
	c.CurrentContext = context
	if err := clientcmdapi.MinifyConfig(c); err != nil {
		return nil, fmt.Errorf("context %q: %w", context, err)
	}
	if err := clientcmdapi.FlattenConfig(c); err != nil {
		return nil, fmt.Errorf("context %q: embedding its files: %w", context, err)
	}
	kctx := c.Contexts[context]
	return write(id, atAddress(c.Clusters[kctx.Cluster], address), c.AuthInfos[kctx.AuthInfo])
}

// Portable says why a user entry would not work inside a pod ("" when it would).
func Portable(raw clientcmdapi.Config, context string) string {
	kctx, ok := raw.Contexts[context]
	if !ok {
		return "no such context"
	}
	u := raw.AuthInfos[kctx.AuthInfo]
	switch {
	case u == nil:
		return "no user"
	case u.Exec != nil:
		return fmt.Sprintf("its user runs %q for credentials, which the image does not hold", u.Exec.Command)
	case u.AuthProvider != nil:
		return fmt.Sprintf("its user takes credentials from the %q auth provider", u.AuthProvider.Name)
	}
	return ""
}

func write(id string, cluster *clientcmdapi.Cluster, user *clientcmdapi.AuthInfo) ([]byte, error) {
	c := clientcmdapi.NewConfig()
	c.Clusters[id] = cluster
	c.AuthInfos[id] = user
	c.Contexts[id] = &clientcmdapi.Context{Cluster: id, AuthInfo: id}
	c.CurrentContext = id
	return clientcmd.Write(*c)
}
