# Call 13 (nvidia-h100-x1, carry .devdata): call 11 again, with train.py's logged time fixed (call 12).
bash docs/runs/2026-11-26-issue8-s17/call11.sh
