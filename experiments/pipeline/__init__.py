"""The run infrastructure: load sweeps and their saturation search, execution on a pool or a
dask cluster, the results file, plots and the speed benchmark."""
