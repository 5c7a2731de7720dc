awk '{printf "{\"score\": %.4f}\n", 1 - $1/100}' src/cost.txt
