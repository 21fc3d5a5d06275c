"""Reading other tools' world formats into webworld specs."""
