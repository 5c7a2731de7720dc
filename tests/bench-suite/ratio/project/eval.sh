h=$(cat src/hits.txt); t=$(cat src/total.txt); awk -v h=$h -v t=$t 'BEGIN {printf "{\"score\": %.4f}\n", h/t}'
