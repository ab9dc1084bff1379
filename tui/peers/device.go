package peers

// BoardMark names the peer that is the attached board in words: after its
// name in the detail header, and in the Peers filter ("board" finds it).
const BoardMark = "(board)"

// BoardMarker marks the board's row in the Peers table, in a one-cell
// column of its own between the cursor and the name, so the name is never
// cut for it; the status line's "* board: NAME" is its legend.
const BoardMarker = "*"
