# device call 3 (nvidia-h100-x2, GPU 0): call 9 of 2026-11-24 again (its logs were not kept): bash docs/runs/2026-11-24-issue8-s3/call9.sh
bash docs/runs/2026-11-24-issue8-s3/call9.sh
