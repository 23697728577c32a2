import type { ModuleDef } from '../registry.js'
import { startRecommenderTrainer } from './recommender-trainer.js'
import { recommenderRoutes } from './recommenders.routes.js'

/** Recommenders (api.md, contract §8): the resource, background training, and the RECOMMEND merge tag. */
export const recommendersModule: ModuleDef = {
  name: 'recommenders',
  apiRoutes: recommenderRoutes,
  async startWorker(ctx) {
    const trainer = startRecommenderTrainer(ctx)
    ctx.onClose(() => trainer.stop())
  },
}
