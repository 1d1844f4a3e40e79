// Package krewmanifest is the part of a krew plugin manifest that `make dist` checks and the krew
// test reads back, so both read it the same way.
package krewmanifest

// Plugin is a krew.googlecontainertools.github.com/v1alpha2 Plugin, the fields we use.
type Plugin struct {
	APIVersion string `json:"apiVersion"`
	Kind       string `json:"kind"`
	Metadata   struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Spec struct {
		Version          string     `json:"version"`
		Homepage         string     `json:"homepage"`
		ShortDescription string     `json:"shortDescription"`
		Description      string     `json:"description"`
		Caveats          string     `json:"caveats"`
		Platforms        []Platform `json:"platforms"`
	} `json:"spec"`
}

// Platform is one archive of the plugin.
type Platform struct {
	Selector struct {
		MatchLabels map[string]string `json:"matchLabels"`
	} `json:"selector"`
	URI    string `json:"uri"`
	SHA256 string `json:"sha256"`
	Bin    string `json:"bin"`
}
