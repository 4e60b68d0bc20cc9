"""Human validation studies: services (writes), selectors (reads), assignment, agreement, jobs, views."""
