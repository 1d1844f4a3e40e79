package cmd

import (
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"

	"github.com/spf13/pflag"
)

// profiling is kubectl's --profile and --profile-output: one command's own profile, written when
// it ends (sync --watch serves live ones on its metrics address with --profiling).
type profiling struct {
	kind, output string
	stop         func() error
}

func (p *profiling) addFlags(fs *pflag.FlagSet) {
	fs.StringVar(&p.kind, "profile", "none", "Name of profile to capture. One of (none|cpu|heap|goroutine|threadcreate|block|mutex)")
	fs.StringVar(&p.output, "profile-output", "profile.pprof", "Name of the file to write the profile to")
}

func (p *profiling) start() error {
	switch p.kind {
	case "none":
		return nil
	case "cpu":
		f, err := os.Create(p.output)
		if err != nil {
			return fmt.Errorf("--profile-output: %w", err)
		}
		if err := pprof.StartCPUProfile(f); err != nil {
			f.Close()
			return fmt.Errorf("--profile=cpu: %w", err)
		}
		p.stop = func() error {
			pprof.StopCPUProfile()
			return f.Close()
		}
		return nil
	case "block":
		runtime.SetBlockProfileRate(1)
	case "mutex":
		runtime.SetMutexProfileFraction(1)
	}
	if pprof.Lookup(p.kind) == nil {
		return fmt.Errorf("--profile: no profile %q (one of none, cpu, heap, goroutine, threadcreate, block, mutex)", p.kind)
	}
	p.stop = p.write
	return nil
}

func (p *profiling) write() error {
	f, err := os.Create(p.output)
	if err != nil {
		return fmt.Errorf("--profile-output: %w", err)
	}
	if p.kind == "heap" {
		runtime.GC() // what is live, not what was last collected
	}
	if err := pprof.Lookup(p.kind).WriteTo(f, 0); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// flush writes the profile; once.
func (p *profiling) flush() error {
	if p.stop == nil {
		return nil
	}
	stop := p.stop
	p.stop = nil
	return stop()
}
