// The schedules icon (same stroke style as components/icons.tsx; decorative).
