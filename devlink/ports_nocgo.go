//go:build darwin && !cgo

package devlink

import "go.bug.st/serial"

// ListPorts lists the host's serial ports. Built without cgo on macOS, the
// USB ids are not available, so "auto" cannot tell an ESP32 from other
// ports: pass --port /dev/cu.usbmodem… instead.
func ListPorts() ([]PortInfo, error) {
	names, err := serial.GetPortsList()
	if err != nil {
		return nil, err
	}
	out := make([]PortInfo, 0, len(names))
	for _, n := range names {
		out = append(out, PortInfo{Name: n})
	}
	return out, nil
}
