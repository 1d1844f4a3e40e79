//go:build !linux

package main

import "os/exec"

// dieWithBench: only Linux has a parent-death signal; elsewhere the child outlives a killed bench.
func dieWithBench(*exec.Cmd) {}
