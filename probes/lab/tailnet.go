package lab

import "net/netip"

// ObserverIP is the observer's IPv4 tailnet address.
func (l *Lab) ObserverIP() netip.Addr { return l.observer.ip }
