package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	"k8s.io/component-base/cli"
	_ "k8s.io/client-go/plugin/pkg/client/auth"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd"
)

func main() {
	root := cmd.NewCmdMCS(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	os.Exit(cli.Run(root))
}
