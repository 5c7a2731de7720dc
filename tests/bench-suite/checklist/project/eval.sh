d=$(grep -c '^- \[x\]' src/todo.md); t=$(grep -c '^- \[' src/todo.md); awk -v d=$d -v t=$t 'BEGIN {printf "{\"score\": %.4f}\n", d/t}'
