package cli

import (
	"testing"
	"time"
)

// TestOneShotGC: only status runs without collecting, and GOGC or
// GOMEMLIMIT given by the user stand.
func TestOneShotGC(t *testing.T) {
	for _, tc := range []struct {
		args []string
		env  map[string]string
		want bool
	}{
		{[]string{"status", "--json"}, nil, true},
		{[]string{"status"}, nil, true},
		{nil, nil, false},
		{[]string{"--socket", "x"}, nil, false},
		{[]string{"serve"}, nil, false},
		{[]string{"tail"}, nil, false},
		{[]string{"status"}, map[string]string{"GOGC": "100"}, false},
		{[]string{"status"}, map[string]string{"GOMEMLIMIT": "1GiB"}, false},
	} {
		gc, ok := OneShotGC(tc.args, func(k string) string { return tc.env[k] })
		if ok != tc.want {
			t.Errorf("OneShotGC(%q, %v) ok = %v, want %v", tc.args, tc.env, ok, tc.want)
		}
		if ok && (gc.Percent != -1 || gc.Limit != OneShotMemLimit) {
			t.Errorf("OneShotGC(%q) = %+v, want the collector off up to %d bytes", tc.args, gc, OneShotMemLimit)
		}
	}
}

// TestSignalsAfter: status and version install their handlers after
// OneShotSignalDelay; every other command, and none given (the
// dashboard), at once.
func TestSignalsAfter(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want time.Duration
	}{
		{nil, 0},
		{[]string{"status"}, OneShotSignalDelay},
		{[]string{"status", "--json", "--probe"}, OneShotSignalDelay},
		{[]string{"status", "--save", "s.json"}, 0},
		{[]string{"status", "-save=s.json"}, 0},
		{[]string{"status", "--json", "--", "--save"}, OneShotSignalDelay},
		{[]string{"version"}, OneShotSignalDelay},
		{[]string{"--version"}, OneShotSignalDelay},
		{[]string{"--socket", "/s"}, 0},
		{[]string{"demo"}, 0},
		{[]string{"tail"}, 0},
		{[]string{"tune", "--apply"}, 0},
		{[]string{"serve"}, 0},
		{[]string{"help", "status"}, 0},
	} {
		if got := SignalsAfter(tc.args); got != tc.want {
			t.Errorf("SignalsAfter(%q) = %v, want %v", tc.args, got, tc.want)
		}
	}
}
