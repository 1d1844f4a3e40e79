package install

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/clusterset"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/shell"
)

// errNoToken: the member's token Secret is absent or not filled yet.
var errNoToken = errors.New("no token")

// tokenOf gives the token of a member's token Secret and the CA the Secret carries.
type tokenOf func(ctx context.Context, m *clusterset.Connection, secret string) (token string, ca []byte, err error)

// kubeconfigs are the members' kubeconfigs for the pods of one Deployment, by ID: per member,
// its own (local) through the pod's in-cluster files, and every other member with the token of
// local's reader identity there; in host mode (local "") every member with the writer's token,
// or the user's own credentials. Each reaches its apiserver at the address Validate decided.
func (o *Options) kubeconfigs(ctx context.Context, token tokenOf, local string) (map[string][]byte, error) {
	secret := TokenSecret
	if local != "" {
		secret = ReaderTokenSecret(local)
	}
	out := map[string][]byte{}
	for _, m := range o.Members {
		var kc []byte
		var err error
		switch {
		case m.ID == local:
			kc, err = InClusterKubeconfig(m.ID)
		case o.MemberCredentials == CredentialsCurrent:
			kc, err = o.currentCredentials(m)
		default:
			if m.Err != nil {
				return nil, fmt.Errorf("cluster %q (context %q): %w", m.ID, m.Context, m.Err)
			}
			tok, ca, terr := token(ctx, m, secret)
			if terr != nil {
				return nil, terr
			}
			kc, err = TokenKubeconfig(m.ID, m.Config, o.servers[m.ID], ca, tok)
		}
		if err != nil {
			return nil, err
		}
		out[m.ID] = kc
	}
	return out, nil
}

// readToken reads a token Secret as it is: errNoToken when it is absent or not filled yet.
func readToken(ctx context.Context, m *clusterset.Connection, secret string) (string, []byte, error) {
	s, err := m.Client.CoreV1().Secrets(DefaultNamespace).Get(ctx, secret, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		return "", nil, errNoToken
	case err != nil:
		return "", nil, fmt.Errorf("cluster %q: secret %s/%s: %w", m.ID, DefaultNamespace, secret, err)
	case len(s.Data["token"]) == 0:
		return "", nil, errNoToken
	}
	return string(s.Data["token"]), s.Data["ca.crt"], nil
}

// existingToken is Print's: the token Install made, or an error naming the member and the
// command that makes it.
func (o *Options) existingToken(ctx context.Context, m *clusterset.Connection, secret string) (string, []byte, error) {
	tok, ca, err := readToken(ctx, m, secret)
	if errors.Is(err, errNoToken) {
		alt := "pass --member-credentials=current, or "
		if o.perMember() {
			alt = ""
		}
		return "", nil, fmt.Errorf("cluster %q: no ServiceAccount token in secret %s/%s: %screate it with:%s",
			m.ID, DefaultNamespace, secret, alt, shell.Block(o.installCommand()))
	}
	return tok, ca, err
}

// installedToken is Install's: the token once the token controller filled it; in a dry run,
// the one there is, if any (nothing was created to wait for).
func (o *Options) installedToken(ctx context.Context, m *clusterset.Connection, secret string) (string, []byte, error) {
	if o.Write.DryRun != cmdutil.DryRunNone {
		tok, ca, err := readToken(ctx, m, secret)
		if errors.Is(err, errNoToken) {
			fmt.Fprintf(o.ErrOut, "Warning: cluster %q: dry run: no ServiceAccount token exists yet (secret %s/%s); its kubeconfig carries none\n", m.ID, DefaultNamespace, secret)
			return "", nil, nil
		}
		return tok, ca, err
	}
	var tok string
	var ca []byte
	err := wait.PollUntilContextTimeout(ctx, 200*time.Millisecond, o.TokenTimeout, true, func(ctx context.Context) (bool, error) {
		var err error
		tok, ca, err = readToken(ctx, m, secret)
		if errors.Is(err, errNoToken) {
			return false, nil
		}
		return err == nil, err
	})
	if err != nil {
		return "", nil, fmt.Errorf("cluster %q: secret %s/%s: no token after %s (is the token controller of kube-controller-manager running?): %w",
			m.ID, DefaultNamespace, secret, o.TokenTimeout, err)
	}
	return tok, ca, nil
}

// installCommand is the install of this very clusterset and host.
func (o *Options) installCommand() shell.Command {
	ctxs := make([]string, len(o.Members))
	for i, m := range o.Members {
		ctxs[i] = m.Context
		if m.ID != m.Context {
			ctxs[i] += "=" + m.ID
		}
	}
	if o.perMember() {
		return shell.MCS("install", "--mode="+ModePerMember, "--contexts="+strings.Join(ctxs, ","))
	}
	return shell.MCS("install", "--contexts="+strings.Join(ctxs, ","), "--context="+o.Host)
}

// currentCredentials embeds the user's own credentials for one member, saying so.
func (o *Options) currentCredentials(m *clusterset.Connection) ([]byte, error) {
	fmt.Fprintf(o.ErrOut, "Warning: cluster %q: embedding the credentials of context %q in secret %s/%s; the Deployment acts with all their rights (--member-credentials=serviceaccount grants only what sync uses)\n",
		m.ID, m.Context, DefaultNamespace, KubeconfigSecret)
	if why := Portable(o.Raw, m.Context); why != "" {
		fmt.Fprintf(o.ErrOut, "Warning: cluster %q: context %q will not work in a pod: %s\n", m.ID, m.Context, why)
	}
	kc, err := CurrentKubeconfig(o.Raw, m.Context, m.ID, o.servers[m.ID])
	if err != nil {
		return nil, fmt.Errorf("cluster %q: %w", m.ID, err)
	}
	return kc, nil
}
