package main

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKarmadaTargets(t *testing.T) {
	res := &KarmadaResults{ChurnRate: 10, Runs: []KarmadaRun{
		{Services: 100, Sync: latency([]float64{11, 13}), Karmada: latency([]float64{200, 900}), Floor: latency([]float64{10, 10})},
		{Services: 100, Churn: true, Sync: latency([]float64{20, 100}), Karmada: latency([]float64{400, 500})},
	}}
	got := karmadaTargets(res)
	want := []struct {
		what string
		met  bool
	}{
		{"idle, sync within 1.2x of the two-hop floor, p50", true},  // 11 against 10
		{"idle, sync within 1.2x of the two-hop floor, p99", false}, // 13 against 10
		{"under churn, sync at least 10x faster than Karmada, p50", true},
		{"under churn, sync at least 10x faster than Karmada, p99", false}, // 100 against 500
	}
	if len(got) != len(want) {
		t.Fatalf("%d targets, want %d: %+v", len(got), len(want), got)
	}
	for i, w := range want {
		if got[i].what != w.what || got[i].met != w.met || got[i].services != 100 {
			t.Errorf("target %d = %+v, want %q met=%v", i, got[i], w.what, w.met)
		}
	}
	if !strings.Contains(got[0].measured, "1.10x (Karmada: 20.00x)") {
		t.Errorf("idle p50 measured %q", got[0].measured)
	}
	if !strings.Contains(got[2].measured, "20.0x faster") {
		t.Errorf("churn p50 measured %q", got[2].measured)
	}
	table := karmadaTable(res)
	for _, w := range []string{"| 100 | idle | 11.0 / 13.0 / 13.0 | 200.0 / 900.0 / 900.0 |", "| met |", "| **missed** |"} {
		if !strings.Contains(table, w) {
			t.Errorf("table has no %q:\n%s", w, table)
		}
	}
	if p := cdfPanels(res); len(p) != 2 || p[1].Title != "100 services, churn (10 changes/s per path)" || len(p[0].Series[1].Samples) != 2 {
		t.Errorf("panels %+v", p)
	}
}

func TestControllerManagerMetrics(t *testing.T) {
	dir := t.TempDir()
	if got := controllerManagerMetrics(dir); got != "" {
		t.Errorf("no ports file: %q", got)
	}
	writeFile(t, dir+"/karmada-cp/ports", "webhook=1234\ncm-metrics=4321\n")
	if got := controllerManagerMetrics(dir); got != "http://127.0.0.1:4321/metrics" {
		t.Errorf("got %q", got)
	}
}

func writeFile(t *testing.T, path, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestFirstLine(t *testing.T) {
	if got := firstLine(errors.New("one")); got != "one" {
		t.Errorf("got %q", got)
	}
	err := errors.Join(errors.New("a: canceled"), errors.New("b: canceled"), errors.New("c: canceled"))
	if got := firstLine(err); got != "a: canceled (and 2 more)" {
		t.Errorf("got %q", got)
	}
}
