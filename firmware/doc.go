// Package firmware holds tailpath's bundled CoreS3 (ESP32-S3) firmware, an
// ESP-IDF 6.0 project in C (see docs/firmware.md). The Go package exists so
// that `go test ./...` also runs the firmware's host checks: the cmocka unit
// tests under AddressSanitizer and UBSan, the Xtensa cross-compile with its
// size budget, the scenario capture in testdata/scenario.log, and the ESP-IDF
// glue compiled against our stand-in SDK headers (host/idfstub).
package firmware
