"""Detection rules: the catalog, known key sets, leak and anomaly detection over batches of pushes."""
