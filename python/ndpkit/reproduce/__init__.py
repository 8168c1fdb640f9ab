"""Paper reproductions: one module per paper, composing hw, model and plan."""

REPRODUCTIONS = {
    "rans-rfns": "ndpkit.reproduce.rans_rfns",
    "risp": "ndpkit.reproduce.risp",
    "nascent2": "ndpkit.reproduce.nascent2",
}
