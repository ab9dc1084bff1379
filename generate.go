package main

// One command regenerates everything generated in this repository:
//
//	go generate ./...
//
// It runs devlink/telemetry's field generator (its own //go:generate) and
// the directives below, each the test that fails while its output is stale
// run with its rewrite flag: the goldens, the tables the docs keep, the
// binary-log fixture and the firmware's scenario capture. .ci/run runs it
// and fails when it leaves the tree changed. Review what it changed
// (git diff) before committing: a golden that moved is a screen that did.
//
// The firmware's scenario needs gcc and make (firmware/host/Makefile);
// everything else needs only go.

//go:generate go test -count=1 -run ^TestStatusFromGolden$ . -update-from
//go:generate go test -count=1 -run ^TestTuneRootsLimitFirst$ . -update-tune
//go:generate go test -count=1 -run ^TestDocsNameEveryReason$ ./probes -update-docs
//go:generate go test -count=1 -run ^TestCorpus$ ./probes/paste -update-corpus
//go:generate go test -count=1 -run ^TestBinLogFixtureUpToDate$ ./devlink -update-binlog
//go:generate go test -count=1 -run "Golden|SelfNoColor" ./tui -update
//go:generate go test -count=1 -run Golden ./tui/device -update
//go:generate go test -count=1 -run Golden ./tui/logpane -update
//go:generate go test -count=1 -run Golden ./tui/tuning -update
//go:generate go test -count=1 -run ^TestReplayAgesFromSnapshotTime$ ./internal/dashboard -update
//go:generate go test -count=1 -run ^TestReadmeNamesEveryTab$ ./internal/dashboard -update-readme
//go:generate make -s -C firmware/host scenario-update
