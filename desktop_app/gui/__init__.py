"""The desktop app's wiring: the window's backend over the services, and the Qt start-up."""
