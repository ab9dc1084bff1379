package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// TestGeneratedUpToDate fails when devlink/telemetry/fields_gen.go is not
// what the tp tags in telemetry.go generate.
func TestGeneratedUpToDate(t *testing.T) {
	want, err := Generate("../../telemetry.go")
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("../../fields_gen.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("devlink/telemetry/fields_gen.go is stale: run go generate ./devlink/telemetry")
	}
}

// TestRejects checks the generator refuses tags it cannot encode.
func TestRejects(t *testing.T) {
	const head = "package telemetry\n\ntype Frame struct {\n\tSeq uint32 `tp:\"seq\"`\n\tStatus Status `tp:\"S\"`\n}\n\n"
	tests := []struct{ name, body, want string }{
		{"untagged", "type Status struct {\n\tA uint32\n}\n", "has no tp tag"},
		{"bad key", "type Status struct {\n\tA uint32 `tp:\"A-b\"`\n}\n", "is not [a-z0-9]+"},
		{"duplicate", "type Status struct {\n\tA uint32 `tp:\"a\"`\n\tB uint32 `tp:\"a\"`\n}\n", `key "a" twice`},
		{"repeats seq", "type Status struct {\n\tA uint32 `tp:\"seq\"`\n}\n", `key "seq" twice`},
		{"no wire type", "type Status struct {\n\tA float64 `tp:\"a\"`\n}\n", "has no wire type"},
		{"uint64 without tenths", "type Status struct {\n\tA uint64 `tp:\"a\"`\n}\n", "has no wire type"},
		{"tenths not uint64", "type Status struct {\n\tA uint32 `tp:\"a,tenths\"`\n}\n", "tenths needs uint64"},
		{"unknown option", "type Status struct {\n\tA uint32 `tp:\"a,hex\"`\n}\n", "unknown tag option"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			path := t.TempDir() + "/telemetry.go"
			if err := os.WriteFile(path, []byte(head+tc.body), 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Generate(path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Generate = %v, want an error containing %q", err, tc.want)
			}
		})
	}
}
