awk '{s+=$1} END {printf "{\"score\": %.4f}\n", s/30}' src/a.txt src/b.txt src/c.txt
