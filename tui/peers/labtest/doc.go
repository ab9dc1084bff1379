// Package labtest holds the dashboard's end-to-end test against the lab
// tailnet (probes/lab): real tailscale nodes on loopback feeding a real
// tailscaled.Source into the real Bubble Tea program. It has no non-test code.
package labtest
