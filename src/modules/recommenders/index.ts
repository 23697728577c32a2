export { recommenders, recommenderPairs, recommenderBestsellers } from './recommenders.table.js'
export {
  recommendTags,
  recommendationVars,
  type RecommendTags,
  type RecommendBatch,
} from './recommend-vars.js'
export { trainDueRecommenders } from './recommender-trainer.js'
