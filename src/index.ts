export * from './state/index';
