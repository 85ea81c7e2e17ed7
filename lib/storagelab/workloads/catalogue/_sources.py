"""The documents the catalogue's generators quote: a file of the studies' corpus and its title."""

DS5020 = "002_3dbf0d9df4c2366f.txt (ESG Lab, IBM DS5020)"
NEXGEN = "000_95d1997ae9f905ef.txt (NexGen N5, Principled Technologies)"
ILIO = "004_496e3827612b8d9a.txt (Dell Wyse + Atlantis ILIO)"
