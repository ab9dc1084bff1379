package devlink

// PortInfo describes one serial port found on the host.
type PortInfo struct {
	Name  string // device path: /dev/ttyACM0, /dev/cu.usbmodem1101, COM3
	IsUSB bool
	// VID and PID are the USB ids as lowercase hex without "0x" ("303a",
	// "1001"); empty when unknown (not USB, or listed without USB details).
	VID, PID string
	Product  string // USB product string, when known
}
