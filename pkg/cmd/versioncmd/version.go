// Package version implements `kubectl mcs version`.
package versioncmd

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/spf13/cobra"
	"k8s.io/cli-runtime/pkg/genericiooptions"
	cmdutil "k8s.io/kubectl/pkg/cmd/util"
	"k8s.io/kubectl/pkg/util/templates"
	"sigs.k8s.io/yaml"

	"github.com/kubectl-mcs/kubectl-mcs/pkg/printers"
	"github.com/kubectl-mcs/kubectl-mcs/pkg/version"
)

// Info is the machine-readable version; its JSON field names are stable.
type Info struct {
	Version   string   `json:"version"`
	Commit    string   `json:"commit"`
	Image     string   `json:"image"` // the manifests' default --image; "" when make did not build it
	GoVersion string   `json:"goVersion"`
	Platform  string   `json:"platform"`
	APIs      []string `json:"apis"`
}

// Options holds `version`'s flags.
type Options struct {
	Print printers.OutputFlags
	genericiooptions.IOStreams
}

var example = templates.Examples(`
	# Print the version
	kubectl mcs version

	# Print it as JSON
	kubectl mcs version -o json`)

// NewCmdVersion returns the version command.
func NewCmdVersion(streams genericiooptions.IOStreams) *cobra.Command {
	o := &Options{IOStreams: streams, Print: printers.OutputFlags{Formats: []string{"json", "yaml"}, Usage: "One of: json, yaml"}}
	cmd := &cobra.Command{
		Use:     "version",
		Short:   "Print the version, commit and the API versions kubectl-mcs speaks",
		Example: example,
		Args:    cobra.NoArgs,
		Run: func(cmd *cobra.Command, args []string) {
			cmdutil.CheckErr(o.Validate())
			cmdutil.CheckErr(o.Run())
		},
	}
	o.Print.AddFlags(cmd)
	return cmd
}

// Validate checks the output format.
func (o *Options) Validate() error { return o.Print.Validate() }

// Run prints the version.
func (o *Options) Run() error {
	info := Info{
		Version:   version.Version,
		Commit:    version.Commit,
		Image:     version.Image,
		GoVersion: runtime.Version(),
		Platform:  runtime.GOOS + "/" + runtime.GOARCH,
		APIs:      version.APIs,
	}
	switch o.Print.Format {
	case "json":
		b, err := json.MarshalIndent(info, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(o.Out, string(b))
		return err
	case "yaml":
		b, err := yaml.Marshal(info)
		if err != nil {
			return err
		}
		_, err = o.Out.Write(b)
		return err
	}
	image := info.Image
	if image == "" {
		image = "none (not built by make; --print-manifests needs --image)"
	}
	_, err := fmt.Fprintf(o.Out, "kubectl-mcs %s (commit %s, %s, %s)\nImage: %s\nAPIs: %s\n",
		info.Version, info.Commit, info.GoVersion, info.Platform, image, strings.Join(info.APIs, ", "))
	return err
}
