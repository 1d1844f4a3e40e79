package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd"
)

func main() {
	cmd.Execute(cmd.NewCmdMCS(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr}))
}
