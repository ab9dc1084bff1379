//go:build !darwin || cgo

package devlink

import (
	"strings"

	"go.bug.st/serial/enumerator"
)

// ListPorts lists the host's serial ports with their USB ids
// (go.bug.st/serial/enumerator.GetDetailedPortsList).
func ListPorts() ([]PortInfo, error) {
	ds, err := enumerator.GetDetailedPortsList()
	if err != nil {
		return nil, err
	}
	out := make([]PortInfo, 0, len(ds))
	for _, d := range ds {
		out = append(out, PortInfo{Name: d.Name, IsUSB: d.IsUSB, VID: strings.ToLower(d.VID), PID: strings.ToLower(d.PID), Product: d.Product})
	}
	return out, nil
}
