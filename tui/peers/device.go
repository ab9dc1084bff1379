package peers

// BoardMark follows the name of the peer that is the attached board, in the
// Peers table and the detail header.
const BoardMark = "(board)"
