"""The fast environment: captured pages and a client model instead of a browser."""
