// The statistics date range is shared with transactional statistics; it lives in core (it knows no module).
export { parseFromDate, parseStatsRange, type StatsRange } from '../../core/http/stats-range.js'
