export * from './claim';
export * from './metrics';
export * from './policy';
