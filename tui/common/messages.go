package common

import "github.com/tailpath/tailpath/probes"

// PeerSelectedMsg announces that the user selected a peer in the Peers pane
// (cursor moved onto it, or enter opened it). The root broadcasts it to every
// pane: the Peer detail pane shows it, the Device pane can highlight the same
// node. Peer is a copy from the latest snapshot; later snapshots carry updates
// under the same Peer.ID.
type PeerSelectedMsg struct {
	Peer probes.Peer
}

// ShowPaneMsg asks the root to focus the pane whose Title() equals Title.
// Unknown titles are ignored. Panes return it from a command (for example
// the Peers pane on enter, to open the Peer detail pane).
type ShowPaneMsg struct {
	Title string
}
