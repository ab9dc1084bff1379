package sockdiag

// Link is a network interface's attributes as rtnetlink reports them.
type Link struct {
	Name  string `json:"name"`
	Index uint32 `json:"index"`
	// MTU in bytes (Tailscale's TUN defaults to 1280).
	MTU uint32 `json:"mtu"`
	// Qdisc is the root queueing discipline ("noqueue", "fq_codel", "fq").
	Qdisc string `json:"qdisc"`
	Up    bool   `json:"up"`
	// Packet and drop counters since the interface was created.
	RxPackets uint64 `json:"rx_packets"`
	TxPackets uint64 `json:"tx_packets"`
	RxDropped uint64 `json:"rx_dropped"`
	TxDropped uint64 `json:"tx_dropped"`
}

// TailscaleInterface is the TUN device tailscaled creates on Linux.
const TailscaleInterface = "tailscale0"
