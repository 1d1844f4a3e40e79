package main

import (
	"os"

	"k8s.io/cli-runtime/pkg/genericiooptions"
	_ "k8s.io/client-go/plugin/pkg/client/auth"
	"k8s.io/component-base/cli"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/cmd"
)

func main() {
	root := cmd.NewCmdMCS(genericiooptions.IOStreams{In: os.Stdin, Out: os.Stdout, ErrOut: os.Stderr})
	os.Exit(cli.Run(root))
}
