# The sets of the DP grids (sourced by run_grid.sh and run_m_halves.sh): every shared OpenML
# set with at least 5,000 rows, the selection half of research/common/heldout_split.tsv
# first (rules are chosen there), then the validation half.
SETS="28_optdigits 60_waveform-5000 722_pol 734_ailerons 761_cpu-act 979_waveform-5000
1475_first-order-theorem-proving 1497_wall-robot-navigation 4538_GesturePhaseSegmentationProcessed
40499_texture 40900_Satellite
182_satimage 752_puma32H 833_bank32nh 980_optdigits 1496_ringnorm 1507_twonorm 40666_clean2 41146_sylvine"
