package probes

// AllAsks is every command tailpath may ask for: each fact on each
// platform, with "PEER" as the ping's target. Exported to this
// directory's external tests (asks_readable_test.go), which hold each
// command's readers to the pasted formats probes/paste reads.
func AllAsks() []Ask {
	var out []Ask
	for _, sf := range settleFacts {
		for _, p := range allPlatforms {
			if a, _ := askOn(sf.fact, p, pingPlaceholder); a != nil {
				out = append(out, *a)
			}
		}
	}
	return out
}
