package probestest

import (
	"encoding/json"
	"errors"
	"fmt"

	"tailscale.com/ipn"

	"github.com/tailpath/tailpath/internal/tscompat"
)

// Daemon versions a Fixture can ask the server to behave as
// (Fixture.Daemon). Only the IPN bus differs between them; every other
// endpoint answers the fixture's bytes as they are.
const (
	// Daemon102 is tailscaled v1.102.5 (also the default, ""): the bus
	// accepts NotifyInitialNetMap and sends the netmap in the first
	// message; ipn.ValidateNotifyWatchOpt refuses only NotifyRateLimit
	// beside the peer-delta bits.
	Daemon102 = "1.102"
	// Daemon104 is tailscaled v1.104.7: the bus refuses
	// NotifyInitialNetMap and NotifyRateLimit (400 with
	// tscompat.RefusedNetMapText / RefusedRateLimitText, as its
	// ipn.ValidateNotifyWatchOpt and localapi's serveWatchIPNBus answer),
	// never sends a netmap, and fills the first message's
	// InitialStatus.Peer only for a watcher that also set
	// NotifyPeerChanges or NotifyPeerPatches
	// (ipnlocal.LocalBackend.initialStatusBuilder).
	Daemon104 = "1.104"
)

// v1.104's bits that v1.102's ipn package does not name.
const (
	// notifySuspendWhenBehind is v1.104's ipn.NotifySuspendWhenBehind.
	notifySuspendWhenBehind ipn.NotifyWatchOpt = 1 << 19
	// notifyInitialBits are the bits for which tailscaled sends a first
	// message at all (buildInitialNotifyLocked's initialBits, the same in
	// both versions but for NotifyInitialNetMap, gone in v1.104).
	notifyInitialBits = ipn.NotifyInitialState | ipn.NotifyInitialPrefs | ipn.NotifyInitialStatus |
		ipn.NotifyInitialDriveShares | ipn.NotifyInitialSuggestedExitNode | ipn.NotifyInitialClientVersion |
		ipn.NotifySysPolicyChanges | ipn.NotifyPeerWireGuardState
)

// validateMask is what the LocalAPI of fix's daemon version checks of a
// watch-ipn-bus mask before streaming (localapi's serveWatchIPNBus, then
// ipn.ValidateNotifyWatchOpt of that version, written out here so the
// fake keeps each version's rules whichever tailscale.com module tailpath
// builds against); a non-nil error is answered 400 with its text.
func validateMask(fix *Fixture, mask ipn.NotifyWatchOpt) error {
	if mask&ipn.NotifyInProcessNoDisconnect != 0 {
		return errors.New("NotifyInProcessNoDisconnect is only valid for in-process IPN bus subscribers")
	}
	if fix.Daemon != Daemon104 {
		// v1.102.5: NotifyRateLimit only with the old-style bits
		// (NotifyRateLimitIncompatibleBits).
		const newStyle = ipn.NotifyPeerChanges | ipn.NotifyNoNetMap | ipn.NotifyInitialStatus | ipn.NotifyPeerPatches
		if bad := mask & newStyle; mask&tscompat.NotifyRateLimit != 0 && bad != 0 {
			return fmt.Errorf("NotifyRateLimit is incompatible with new-style IPN bus subscription bits %v", bad)
		}
		return nil
	}
	// v1.104.7, in its order.
	switch {
	case mask&tscompat.NotifyRateLimit != 0:
		return errors.New(tscompat.RefusedRateLimitText)
	case mask&tscompat.NotifyInitialNetMap != 0:
		return errors.New(tscompat.RefusedNetMapText)
	case mask&notifySuspendWhenBehind != 0 && mask&ipn.NotifyInitialState == 0:
		return errors.New("NotifySuspendWhenBehind requires NotifyInitialState")
	}
	return nil
}

// initialStatus is the first message's InitialStatus for a watcher with
// mask: nil without NotifyInitialStatus; fix's Status, its Peer map
// emptied on a v1.104 daemon unless mask also sets NotifyPeerChanges or
// NotifyPeerPatches (v1.102 always fills it).
func initialStatus(fix *Fixture, mask ipn.NotifyWatchOpt) json.RawMessage {
	if mask&ipn.NotifyInitialStatus == 0 {
		return nil
	}
	if fix.Daemon != Daemon104 || mask&(ipn.NotifyPeerChanges|ipn.NotifyPeerPatches) != 0 {
		return fix.Status
	}
	// Field by field, so what v1.102's ipnstate.Status lacks stays.
	var st map[string]json.RawMessage
	if err := json.Unmarshal(fix.Status, &st); err != nil {
		return fix.Status // a fault-injection fixture: sent as it is
	}
	st["Peer"] = json.RawMessage("null") // StatusBuilder{WantPeers: false} leaves the map nil
	b, err := json.Marshal(st)
	if err != nil {
		return fix.Status
	}
	return b
}
